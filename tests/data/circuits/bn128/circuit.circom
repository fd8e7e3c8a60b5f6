pragma circom 2.0.0;

// The multiplier over BN254 (bn128): for the wrong-curve tests.
template Multiplier() {
    signal input a;
    signal input b;
    signal output c;
    c <== a * b;
}

component main = Multiplier();
