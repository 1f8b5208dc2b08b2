.gsh particle c20 c8 4
.fvec scale
.bool last
.out pos position
.out tex texcoord0
.proc main
    mova a0.x, v0
    mov pos, c8[a0.x]
    mul tex, c9[a0.x+1], v1
    setemit 0
    emit
    end
.end
