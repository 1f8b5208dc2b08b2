.proc main
    ifu !b0
    .end
    end
.end
