.proc main
    .else
    end
.end
