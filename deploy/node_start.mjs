// `npm start` and `npm run admin` (package.json): `node deploy/node_start.mjs ENTRY [ARGS…]`
// becomes, in this same process (execve: the same pid, signals and standard streams), `node FLAGS
// ENTRY ARGS…` with the flags this Node.js needs (deploy/node_flags.mjs). Before the server, its
// modules are stripped of their types (deploy/strip_types.mjs).
import process from "node:process";
import { permissionFlags, serverFlags } from "./node_flags.mjs";
import { stripTypes } from "./strip_types.mjs";

const [entry, ...args] = process.argv.slice(2);
const major = Number(process.versions.node.split(".")[0]);
const server = entry === "main.ts";
if (server) stripTypes();
const flags = server ? serverFlags(major) : permissionFlags(major);
process.execve(process.execPath, [process.execPath, ...flags, entry, ...args], process.env);
