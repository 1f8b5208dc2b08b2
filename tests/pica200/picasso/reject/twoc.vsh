.proc main
    add r0, c1, c2
    end
.end
