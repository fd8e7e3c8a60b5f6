/* CPU NTT at scale: forward then inverse of 2^K random values (snarkjs roots), checking
 * X_0 = sum x and inverse(forward(x)) = x, with timings. Build against libcuzk:
 *   gcc -O2 -Iinclude -Isrc bench/ntt_roundtrip.c build/libcuzk.a -ljansson -lpthread -lm -o ntt_roundtrip
 *   ./ntt_roundtrip 27 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cuzk/poly.h"
#include "bench/porep.h"
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec/1e9;}
int main(int argc,char**argv){ unsigned k=argc>1?atoi(argv[1]):27; size_t n=(size_t)1<<k;
 cuzk_fr *x=malloc(n*sizeof *x), *y=malloc(n*sizeof *y); if(!x||!y){puts("oom");return 1;}
 cuzk_bench_random_fr(x,n,42); memcpy(y,x,n*sizeof *x);
 cuzk_domain *d; if(cuzk_domain_new(&d,k,CUZK_ROOTS_SNARKJS)) return 1;
 double t0=now(); cuzk_ntt_forward(d,y,0); double t1=now(); 
 /* spot check: X_j = sum x_i w^(ij) at j = 1 via Horner would be O(n); check j=0: sum */
 cuzk_fr s; cuzk_fr_set_zero(&s); for(size_t i=0;i<n;i++) cuzk_fr_add(&s,&s,&x[i]);
 int ok0=cuzk_fr_eq(&s,&y[0]);
 cuzk_ntt_inverse(d,y,0); double t2=now();
 int ok=memcmp(x,y,n*sizeof *x)==0;
 printf("2^%u: forward %.1f s, inverse %.1f s, X_0 = sum x: %s, inverse(forward(x)) = x: %s\n",k,t1-t0,t2-t1,ok0?"yes":"NO",ok?"yes":"NO");
 return !(ok&&ok0);}
