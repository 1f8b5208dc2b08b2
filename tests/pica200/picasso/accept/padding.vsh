; padding NOPs: every rule
.bool b
.proc helper
    mov r0, v0
.end
.proc tailcall
    mov r1, v1
    call helper
.end
.proc main
    ifu b
        call helper
    .else
        mov r2, v2
        callu b, helper
    .end
    ifu b
    .end
    ifu b
        nop
    .else
    .end
    cmp r0, eq, ne, r1
    ifc cmp.x
        ifc cmp.y
            mov r3, r0
        .end
    .end
    for i0
        breakc cmp.x
    .end
    for i1
        mov r4, r0
        break
    .end
    for i2
        add r5, r0, r1
        jmpc cmp.y, skip
skip:
        mov r6, r5
    .end
    ifc !cmp.x || cmp.y
        mov r7, r0
        jmpu !b, after
    .end
after:
    call tailcall
    end
.end
