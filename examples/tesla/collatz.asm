// Loop with prebrk/brk: steps[i] = number of Collatz steps from x[i] to 1
// (x[i] >= 1), each thread leaving the loop with break when it is done.
// params: x, steps (g0 byte addresses), n
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
ld b32 $r6 g0[$r5]                 // v
long mov b32 $r7 0x0               // steps
long mov b32 $r12 0x1
breakaddr #out
loop: set $c0 $r8 le u32 $r6 $r12  // v <= 1: this thread is done
(lg $c0) break
shl b32 $c1 $r8 $r6 0x1f           // Z: v is even
shr u32 $r9 $r6 0x1
long add b32 $r10 $r6 $r6
long add b32 $r10 $r10 $r6
add b32 $r10 $r10 0x1
(e $c1) mov b32 $r6 $r9
(lg $c1) mov b32 $r6 $r10
add b32 $r7 $r7 0x1
bra #loop
out: ld $r11 b32 s[0x14]
long add b32 $r11 $r11 $r1
st b32 g0[$r11] $r7
done: exit nop
