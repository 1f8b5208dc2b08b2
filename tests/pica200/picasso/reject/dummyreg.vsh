.out - color o8
.proc main
    end
.end
