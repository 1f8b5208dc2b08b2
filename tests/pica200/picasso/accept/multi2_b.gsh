.gsh point c8
.fvec u0, arr[4]
.out p position
.entry gmain
.proc gmain
    mov p, arr[2]
    add p.x, u0, r0
    setemit 0
    emit
    end
.end
