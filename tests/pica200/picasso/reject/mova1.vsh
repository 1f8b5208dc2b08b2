.proc main
    mova v0
    end
.end
