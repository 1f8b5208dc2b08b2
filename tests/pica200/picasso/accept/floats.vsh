; constants as picasso converts them (atof, then a truncating float24)
.constf big(1e30, -1e30, 3.4e38, 1e-19)
.constf tiny(1e-30, -1e-30, 0.0, -0.0)
.constf fracs(0.1, 0.3333333, -2.718281828, 65504.0)
.constf words(abc, 2x, .75e1, +4)
.consti ints(-128, 255, 256, 1000)
.consti hexes(0x10, 017, 12abc, -1)
.proc main
    mov r0, big
    mov r1, tiny
    mov r2, fracs
    mov r3, words
    end
.end
