// Package archtest holds the tests of rules about the project's code as a
// whole: the wire versions and the packets are described once, in package
// decode, and the rest of the code asks that description what a version can
// do and what kind a packet is, rather than naming them.
package archtest
