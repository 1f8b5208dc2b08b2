; picasso quirks kept: upper-case register letters name the raw number
.fvec u[4]
.proc main
    mov R1, R2
    mov r0, C2
    dp4 r1, u[1], R17
    MOV o1, r0.XyZw
    END
.END
