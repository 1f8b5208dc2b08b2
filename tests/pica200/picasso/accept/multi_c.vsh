.proc lib
    mov r1, r2
.end
.nodvle
