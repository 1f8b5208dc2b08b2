.fvec shared[4]
.fvec onlyA
.constf ka(1.0, 2.0, 3.0, 4.0)
.out p position
.proc main
    dp4 p.x, shared[0], v0
    mov p.y, ka
    call common
    end
.end
