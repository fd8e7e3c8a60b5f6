pragma circom 2.0.0;

// No public signals at all: proves knowledge of a factorisation of 35 into a, b.
template NoPub() {
    signal input a;
    signal input b;
    signal ab;
    ab <== a * b;
    ab === 35;
    signal inv;
    inv <-- 1 / (a - 1);
    inv * (a - 1) === 1;
}

component main = NoPub();
