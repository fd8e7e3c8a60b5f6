// SPDX-License-Identifier: Apache-2.0
// Verifies many Groth16 proofs with snarkjs's own verifier in one node process.
// Usage: node verify_all.mjs MANIFEST, where each line is "VK<TAB>PUBLIC<TAB>PROOF" (JSON
// files). Prints one line per failure and "snarkjs: N of M proofs valid"; exit 0 when all are.
import { readFileSync } from "fs";
import { createRequire } from "module";
import { dirname, join } from "path";
import { fileURLToPath } from "url";

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(join(here, "../js/package.json"));
const snarkjs = require("snarkjs");

const lines = readFileSync(process.argv[2], "utf8").split("\n").filter((l) => l.length);
const load = (p) => JSON.parse(readFileSync(p, "utf8"));
const quiet = { debug() {}, info() {}, warn() {}, error: console.error };
let ok = 0;
for (const l of lines) {
    const [vk, pub, proof] = l.split("\t");
    const good = await snarkjs.groth16.verify(load(vk), load(pub), load(proof), quiet);
    if (good) ok++;
    else console.log(`INVALID: ${proof} (public ${pub}, key ${vk})`);
}
console.log(`snarkjs: ${ok} of ${lines.length} proofs valid`);
process.exit(ok === lines.length && lines.length > 0 ? 0 : 1);
