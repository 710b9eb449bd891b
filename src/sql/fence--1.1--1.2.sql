-- fence 1.1 to 1.2: every change since 1.1, one block per concern.  The
-- extension-update test (test/t/012_extension_update.pl) proves that an
-- installation updated with it has exactly the objects a fresh 1.2 install
-- has.

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION fence UPDATE TO '1.2'" to load this file. \quit

-- No object has changed since 1.1 yet: the changes to come add their
-- blocks here.
