.proc main
    mov r0, r1.xyzwx
    end
.end
