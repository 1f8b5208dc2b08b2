.proc main
    loop i0
    .end
    end
.end
