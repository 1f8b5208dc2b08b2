.proc main
    mov r0, r1[a0.x]
    end
.end
