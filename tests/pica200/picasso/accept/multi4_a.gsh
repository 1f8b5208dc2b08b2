; with multi4_b.vsh: a `.gsh point cN` shader first. Its uniforms at c8..
; would also fit the shared space after a hidden filler, which would put the
; vertex shader's ones elsewhere: the disassembler must pick `point c8`
.gsh point c8
.fvec u0, arr[4]
.out p position
.entry gmain
.proc gmain
    mov p, arr[2]
    setemit 0
    emit
    end
.end
