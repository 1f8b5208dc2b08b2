.proc main
    mov r0[a0.x], r1
    end
.end
