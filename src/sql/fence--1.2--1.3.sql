-- fence 1.2 to 1.3: every change since 1.2, one block per concern.  The
-- extension-update test (test/t/012_extension_update.pl) proves that an
-- installation updated with it has exactly the objects a fresh 1.3 install
-- has.

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION fence UPDATE TO '1.3'" to load this file. \quit
