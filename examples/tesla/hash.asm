// ALU-bound: 32 rounds per thread of an integer hash (shift, xor, 24-bit
// multiply, add) and a Newton step toward 1/a (f32 mul, add, mul), then
// out[i] = h ^ bits(y). The loop count is the same for every thread (a
// counted bra), every thread runs it, and only the load and the store are
// predicated on i < n.
// params: x, out (g0 byte addresses), n
ld $r1 u16 s[0x2]                  // ntid.x
ld $r2 u16 s[0xc]                  // ctaid.x
long mul $r1 u16 $r1l u16 $r2l
cvt u32 $r3 u16 $r0l
long add b32 $r1 $r1 $r3           // i
ld $r4 b32 s[0x18]                 // n
set $c0 $r5 l u32 $r1 $r4          // $c0 lg: i < n
shl b32 $r1 $r1 0x2
ld $r5 b32 s[0x10]
long add b32 $r5 $r5 $r1
(lg $c0) ld b32 $r6 g0[$r5]        // h = x[i]
long and b32 $r8 $r6 0xff
cvt rn f32 $r8 u32 $r8
long add f32 $r8 $r8 0x3f800000    // a = (h & 0xff) + 1
long mov b32 $r9 0x3b800000        // y = 1/256
long mov b32 $r7 0x20              // rounds
long mov b32 $r12 0xffffffff
loop: shr u32 $r10 $r6 0xd
long xor b32 $r6 $r6 $r10          // h ^= h >> 13
long mul $r6 u24 $r6 0x2c1b3c6d    // h = low 32 bits of (h & 0xffffff) * 0x1b3c6d
long add b32 $r6 $r6 $r7           // h += rounds left
long mul rn f32 $r10 $r8 $r9       // a y
long add f32 $r10 neg $r10 0x40000000  // 2 - a y
long mul rn f32 $r9 $r9 $r10       // y = y (2 - a y)
long add b32 $c1 $r7 $r7 $r12      // rounds - 1, Z when done
(lg $c1) bra #loop
long xor b32 $r6 $r6 $r9
ld $r11 b32 s[0x14]
long add b32 $r11 $r11 $r1
(lg $c0) st b32 g0[$r11] $r6
exit nop
