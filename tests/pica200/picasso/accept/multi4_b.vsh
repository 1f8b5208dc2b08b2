.fvec u0, arr[4]
.out p position
.proc main
    mov p, arr[1]
    add p.x, u0, v0
    end
.end
