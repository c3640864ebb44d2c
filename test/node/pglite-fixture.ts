/**
 * A real PostgreSQL (PGlite, Postgres compiled to WebAssembly) on a local socket, seeded with a small
 * schema, for the connector's Postgres tests. It runs in its own process, so a statement that never
 * ends blocks it and not the tests. Prints `port N` once it accepts connections.
 */
import { PGlite } from "@electric-sql/pglite";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";

const db = await PGlite.create();
await db.exec(`
  CREATE TABLE customers (id integer PRIMARY KEY, name varchar(40) NOT NULL, born date, photo bytea);
  CREATE TABLE orders (
    id integer PRIMARY KEY,
    customer_id integer NOT NULL REFERENCES customers (id),
    total numeric(10, 2),
    tags text[]
  );
  CREATE SCHEMA sales;
  CREATE TABLE sales.regions (code text PRIMARY KEY);
  INSERT INTO customers SELECT i, 'c' || i, DATE '2000-01-01' + i, CASE WHEN i = 1 THEN '\\xcafe'::bytea END FROM generate_series(1, 30) AS i;
  INSERT INTO orders VALUES (1, 1, 9.50, '{a,b}'), (2, 1, 20, NULL), (3, 2, NULL, '{}');
  CREATE SEQUENCE ticket_seq;
  INSERT INTO sales.regions VALUES ('eu'), ('us');
`);
const server = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0, maxConnections: 8 });
await server.start();
process.stdout.write(`port ${server.getServerConn()}\n`);
