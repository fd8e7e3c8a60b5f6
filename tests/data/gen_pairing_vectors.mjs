// Known-answer vectors for the BLS12-381 pairing from an independent implementation,
// @noble/curves (npm). Run once from a scratch directory that has it installed, e.g.
//   mkdir -p /tmp/noble && cd /tmp/noble && npm install @noble/curves
//   NOBLE_DIR=/tmp/noble node tests/data/gen_pairing_vectors.mjs > tests/data/pairing_vectors.txt
//
// Output: comment lines start with '#'. Each vector line has, space separated, hex values:
//   a b  P.x P.y  Q.x.c0 Q.x.c1 Q.y.c0 Q.y.c1  g[0] .. g[11]
// with P = a*G1, Q = b*G2 (affine) and g the 12 Fp coefficients of e(P, Q) in cuzk's
// tower order c0.c0.c0, c0.c0.c1, c0.c1.c0, ..., c1.c2.c1. noble's tower is the same
// (Fp12 = Fp6[w]/(w^2 - v), Fp6 = Fp2[v]/(v^3 - (1+u)), Fp2 = Fp[u]/(u^2 + 1)), with
// fields named c0/c1 (Fp12), c0/c1/c2 (Fp6), c0/c1 (Fp2); the script checks that tower
// by testing v^3 = 1+u and w^2 = v before printing.
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import path from 'node:path';

const base = process.env.NOBLE_DIR || '/tmp/noble';
const require = createRequire(path.join(base, 'package.json'));
const mod = await import(pathToFileURL(require.resolve('@noble/curves/bls12-381.js')).href);
const { bls12_381 } = mod;
import { readFileSync } from 'node:fs';
const nobleVersion = JSON.parse(
  readFileSync(path.join(base, 'node_modules/@noble/curves/package.json'), 'utf8')).version;
const { Fp2, Fp6, Fp12 } = bls12_381.fields;

// Tower check: v = (0, 1, 0) in Fp6, v^3 = 1 + u; w = (0, 1) in Fp12, w^2 = v.
const v = Fp6.create({ c0: Fp2.ZERO, c1: Fp2.ONE, c2: Fp2.ZERO });
const v3 = Fp6.mul(Fp6.mul(v, v), v);
const xi = Fp2.create({ c0: 1n, c1: 1n });
if (!Fp6.eql(v3, Fp6.create({ c0: xi, c1: Fp2.ZERO, c2: Fp2.ZERO })))
  throw new Error('unexpected Fp6 tower');
const w = Fp12.create({ c0: Fp6.ZERO, c1: Fp6.ONE });
if (!Fp12.eql(Fp12.mul(w, w), Fp12.create({ c0: v, c1: Fp6.ZERO })))
  throw new Error('unexpected Fp12 tower');

const r = bls12_381.fields.Fr.ORDER;
const hex = (x) => x.toString(16);
const scalars = [
  [1n, 1n],
  [2n, 3n],
  [5n, 1n],
  [0x1234567890abcdefn, 0xfedcba0987654321n],
  [r - 1n, 1n],
  [0x73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000000n - 5n, 77n],
  [0x2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7081n, 0x1f1e1d1c1b1a19181716151413121110n],
];
const out = [];
out.push(`# e(a*G1, b*G2) from @noble/curves ${nobleVersion}, written by tests/data/gen_pairing_vectors.mjs`);
out.push('# a b P.x P.y Q.x.c0 Q.x.c1 Q.y.c0 Q.y.c1 e[0..11] (hex; e in cuzk tower order)');
for (const [a, b] of scalars) {
  const P = bls12_381.G1.Point.BASE.multiply(a);
  const Q = bls12_381.G2.Point.BASE.multiply(b);
  const gt = bls12_381.pairing(P, Q);
  const pa = P.toAffine(), qa = Q.toAffine();
  const coeffs = [];
  for (const c6 of [gt.c0, gt.c1])
    for (const c2 of [c6.c0, c6.c1, c6.c2])
      coeffs.push(c2.c0, c2.c1);
  out.push([a, b, pa.x, pa.y, qa.x.c0, qa.x.c1, qa.y.c0, qa.y.c1, ...coeffs].map(hex).join(' '));
}
process.stdout.write(out.join('\n') + '\n');
