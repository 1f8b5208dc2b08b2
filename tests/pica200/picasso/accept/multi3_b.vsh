.fvec u
.out pos position
.proc main
    add pos, u, v0
    end
.end
