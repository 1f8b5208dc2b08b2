.fvec light c5
.proc main
    end
.end
