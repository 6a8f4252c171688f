/* The language matrix's tiny library function (tests/it/languages.rs): so
 * cheap that much of a call's time is in the caller's PLT stub to it.
 * Build: cc -O2 -g -fPIC -shared -o libplthot.so plthot_lib.c */

int perfz_tiny(int x) { return x ^ (x >> 3); }
