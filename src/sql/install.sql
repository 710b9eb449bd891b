-- fence: the install script of the current version, joined by make from
-- the pieces in src/sql/ (see the Makefile for their order).

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION fence" to load this file. \quit

