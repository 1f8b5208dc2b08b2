.proc sub
    mov r0, r1
.end
.proc main
    cmp r0, eq, ne, r1
    breakc cmp.x
    breakc !cmp.y
    breakc cmp.x && cmp.y
    breakc !cmp.x || !cmp.y
    breakc cmp.y & cmp.x
    breakc cmp.y | !!cmp.x
    callc cmp.x, sub
    callc !cmp.y, sub
    jmpc cmp.x && !cmp.y, done
    jmpc !cmp.x, done
    cmp r0, lt, le, r1
    cmp r0, gt, ge, v3
done:
    end
.end
