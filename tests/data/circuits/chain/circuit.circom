pragma circom 2.0.0;

// A small hash-like chain: two public inputs, one public output, a boolean
// decomposition and a MiMC-style x^5 round function.
template Chain(ROUNDS, BITS) {
    signal input x;       // public
    signal input k;       // public
    signal input secret;  // private
    signal output out;

    // secret < 2^BITS, through its bits
    signal bits[BITS];
    var acc = 0;
    var pow = 1;
    for (var i = 0; i < BITS; i++) {
        bits[i] <-- (secret >> i) & 1;
        bits[i] * (bits[i] - 1) === 0;
        acc += bits[i] * pow;
        pow = pow * 2;
    }
    acc === secret;

    signal s[ROUNDS + 1];
    signal t2[ROUNDS];
    signal t4[ROUNDS];
    s[0] <== x + secret;
    for (var i = 0; i < ROUNDS; i++) {
        t2[i] <== (s[i] + k + i) * (s[i] + k + i);
        t4[i] <== t2[i] * t2[i];
        s[i + 1] <== t4[i] * (s[i] + k + i);
    }
    out <== s[ROUNDS] * x;
}

component main {public [x, k]} = Chain(40, 16);
