.proc main
    mov r0, v1[a0.x+1]
    end
.end
