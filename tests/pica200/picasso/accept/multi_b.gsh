.fvec onlyB
.fvec shared[4]
.constf kb(5.0, 6.0, 7.0, 8.0)
.out p position
.entry gmain
.proc gmain
    dp4 p.x, shared[1], v0
    mov p.y, onlyB
    setemit 0
    emit
    end
.end
.proc common
    mov r0, kb
.end
