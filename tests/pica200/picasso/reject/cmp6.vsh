.proc main
    cmp r0, 6, eq, r1
    end
.end
