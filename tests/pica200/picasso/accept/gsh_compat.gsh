.gsh
.fvec u
.out pos position
.out - dummy o6
.proc main
    mov pos, u
    setemit 0
    emit
    end
.end
