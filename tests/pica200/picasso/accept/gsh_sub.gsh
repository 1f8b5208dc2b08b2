.gsh subdivision c48 3
.fvec mvp[4]
.out pos position
.proc main
    dp4 pos.x, mvp[0], v0
    dp4 pos.y, c0, v0
    setemit 2, primitive
    emit
    end
.end
