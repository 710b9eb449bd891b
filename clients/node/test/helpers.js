'use strict';
// Shared by the tests: a pool on the test server (the libpq environment
// variables: PGHOST, PGPORT, PGDATABASE, PGUSER, a superuser's), unique keys,
// a protected table.
const crypto = require('node:crypto');
const { Pool } = require('pg');

function newPool(max = 4) {
  const pool = new Pool({ max });
  pool.on('error', () => {});
  return pool;
}

function uniqueKey(what) {
  return `test:${what}:${crypto.randomBytes(4).toString('hex')}`;
}

async function protectedTable(pool, name) {
  await pool.query(`DROP TABLE IF EXISTS ${name}`);
  await pool.query(`CREATE TABLE ${name} (id int PRIMARY KEY, result text, fence fence_token NOT NULL DEFAULT 0)`);
  await pool.query(`INSERT INTO ${name} VALUES (1, 'pending')`);
  await pool.query('SELECT fence_protect($1)', [name]);
}

async function status(pool, key, token) {
  return (await pool.query('SELECT fence_lease_status($1::text, $2::bigint) AS s', [key, token.toString()])).rows[0].s;
}

// Resolves with how long the signal took to abort, rejects after ms.
function aborted(signal, ms) {
  const start = Date.now();
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      resolve(0);
      return;
    }
    const timer = setTimeout(() => reject(new Error(`signal not aborted within ${ms} ms`)), ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve(Date.now() - start);
    }, { once: true });
  });
}

module.exports = { newPool, uniqueKey, protectedTable, status, aborted };
