
-- The fence_enforce() trigger (src/enforce.c).
