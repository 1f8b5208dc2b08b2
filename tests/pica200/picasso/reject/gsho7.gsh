.gsh point c0
.proc main
    mov o7, r0
    end
.end
