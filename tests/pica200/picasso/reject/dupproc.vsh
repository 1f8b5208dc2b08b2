.proc main
    end
.end
.proc main
    end
.end
