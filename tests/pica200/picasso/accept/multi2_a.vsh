; with multi2_b.gsh: the same uniform names in a vertex shader and a
; `.gsh point cN` one (own uniform space from c8: same bytes as `.gsh` alone
; but other registers, which the disassembler must reproduce)
.fvec u0, arr[4]
.out p position
.proc main
    mov p, arr[1]
    end
.end
