.proc main
    mov r0, v15
    end
.end
