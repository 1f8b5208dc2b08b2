.fvec a
.fvec a
.proc main
    end
.end
