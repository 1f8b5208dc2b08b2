// call/ret: y[i] = f(x[i]) + f(x[i] + 1) with the subroutine
// f(v) = v * v + 7 (16-bit operands). params: x, y (g0 byte addresses), n
ld $r1 u16 s[0x2]                  // ntid.x
ld $r2 u16 s[0xc]                  // ctaid.x
long mul $r1 u16 $r1l u16 $r2l
cvt u32 $r3 u16 $r0l
long add b32 $r1 $r1 $r3           // i
ld $r4 b32 s[0x18]                 // n
set $c0 $r5 ge u32 $r1 $r4
(lg $c0) bra #done
shl b32 $r1 $r1 0x2
ld $r5 b32 s[0x10]
long add b32 $r5 $r5 $r1
ld b32 $r6 g0[$r5]                 // argument in $r6, result in $r9
call #square_plus_7
long mov b32 $r10 $r9
add b32 $r6 $r6 0x1
call #square_plus_7
long add b32 $r10 $r10 $r9
ld $r7 b32 s[0x14]
long add b32 $r7 $r7 $r1
st b32 g0[$r7] $r10
done: exit nop
square_plus_7: long mul $r9 u16 $r6l u16 $r6l
add b32 $r9 $r9 0x7
ret
