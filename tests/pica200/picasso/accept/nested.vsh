; nested blocks, else parts, loops with aL, lables, jmpu
.fvec tab[8]
.bool b0_, b1_
.ivec cnt
.proc main
    mov r0, tab[0]
    for cnt
        ifu b0_
            add r0, tab[aL], r0
            for cnt
                mul r0, tab[aL+1], r0
            .end
        .else
            ifu b1_
                mov r1, r0
            .else
                mov r2, r0
                jmpu b1_, out
            .end
        .end
    .end
out:
    cmp r0, ge, lt, r1
    ifc cmp.x || cmp.y
        call sub
    .end
    end
.end
.proc sub
    for cnt
        breakc !cmp.x && cmp.y
        add r3, r3, r0
    .end
.end
