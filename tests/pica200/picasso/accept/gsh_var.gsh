.gsh variable c10 2
.fvec u
.out pos position
.proc main
    mov pos, u
    emit
    end
.end
