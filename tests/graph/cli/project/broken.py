raise ValueError('this module cannot be imported')
