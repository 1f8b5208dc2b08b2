.proc main
    mad r0, v0, r1, v2
    end
.end
