.proc main
    add r0, v0, v1
    end
.end
