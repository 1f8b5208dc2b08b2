.proc main
    breakc cmp.x && cmp.x
    end
.end
