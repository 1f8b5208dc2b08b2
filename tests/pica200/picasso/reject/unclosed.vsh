.proc main
    end
